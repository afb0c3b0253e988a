// Both status pages in Debian's headless Chromium, as a person opens them:
// the DOM Chromium renders (--dump-dom) holds the held resources, their
// holders and tokens, and the gateway's stale refusal; on a 390 px wide
// phone screen neither page scrolls sideways, measured in the browser over
// its DevTools protocol, and a screenshot of each is kept under the build
// tree (status-pages/). A page made too wide on purpose shows the
// measurement can fail.
#include <filesystem>
#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "fencegate/client/gateway_client.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/e2e/e2e_fixture.h"
#include "tests/testing/headless_chromium.h"
#include "tests/testing/status_matchers.h"

namespace fencegate::e2e {
namespace {

using ::testing::HasSubstr;

constexpr int kPhoneWidth = 390;
constexpr int kPhoneHeight = 844;

// A resource name with no place to break: the page must wrap it.
const std::string kLongName =
    "tenants/acme-corporation/orders/" + std::string(120, 'x') + "/invoice";

class StatusPageBrowserTest : public E2eTest {
 protected:
  void KeepScreenshot(const std::string& name, const std::string& png) {
    const std::string dir = std::string(FENCEGATE_BUILD_DIR) + "/status-pages";
    std::filesystem::create_directories(dir);
    std::ofstream(dir + "/" + name, std::ios::binary) << png;
  }
};

TEST_F(StatusPageBrowserTest, PagesShowHoldersAndRefusalsAndFitAPhone) {
  // Held resources, one with a waiter, and one stale write refused.
  client::AcquireOptions options;
  options.ttl = absl::Seconds(60);
  ASSERT_OK_AND_ASSIGN(client::AcquireOutcome orders,
                       lock_->Acquire("orders/1", "worker-a", options));
  ASSERT_TRUE(orders.acquired);
  ASSERT_OK_AND_ASSIGN(
      client::AcquireOutcome long_one,
      lock_->Acquire(kLongName, "worker-with-a-rather-long-name", options));
  ASSERT_TRUE(long_one.acquired);
  ASSERT_TRUE(gateway_client_->Put({"orders/1", orders.token, {}}, "k", "v").ok());
  ASSERT_TRUE(lock_->Release("orders/1", orders.token).ok());
  ASSERT_OK_AND_ASSIGN(client::AcquireOutcome newer,
                       lock_->Acquire("orders/1", "worker-b", options));
  ASSERT_TRUE(gateway_client_->Put({"orders/1", newer.token, {}}, "k", "v2").ok());
  EXPECT_EQ(
      gateway_client_->Put({"orders/1", orders.token, {}}, "k", "late").status().code(),
      absl::StatusCode::kAborted);

  ASSERT_OK_AND_ASSIGN(std::string lock_url, lockservice_->MetricsUrl());
  ASSERT_OK_AND_ASSIGN(std::string gateway_url, gateway_->MetricsUrl());

  ASSERT_OK_AND_ASSIGN(std::string lock_dom,
                       testing::DumpDom(lock_url + "/", dir_.path()));
  EXPECT_THAT(lock_dom, HasSubstr("<td data-label=\"Resource\">orders/1</td>"));
  EXPECT_THAT(lock_dom, HasSubstr("<td data-label=\"Holder\">worker-b</td>"));
  EXPECT_THAT(lock_dom, HasSubstr(absl::StrCat("<td class=\"n\" data-label=\"Token\">",
                                               newer.token, "</td>")));
  EXPECT_THAT(lock_dom, HasSubstr(kLongName));
  EXPECT_THAT(lock_dom, HasSubstr("id=\"figure-leases_held\">2<"));

  ASSERT_OK_AND_ASSIGN(std::string gateway_dom,
                       testing::DumpDom(gateway_url + "/", dir_.path()));
  EXPECT_THAT(gateway_dom, HasSubstr("<td data-label=\"Resource\">orders/1</td>"));
  EXPECT_THAT(gateway_dom,
              HasSubstr(absl::StrCat("<td class=\"n\" data-label=\"Refused token\">",
                                     orders.token, "</td>")));
  EXPECT_THAT(gateway_dom,
              HasSubstr(absl::StrCat("<td class=\"n\" data-label=\"Fence then\">",
                                     newer.token, "</td>")));
  EXPECT_THAT(gateway_dom, HasSubstr("id=\"figure-stale_writes_refused\">1<"));

  ASSERT_OK_AND_ASSIGN(auto browser, testing::HeadlessChromium::Start(dir_.path()));
  for (const auto& [name, url] :
       {std::pair<std::string, std::string>{"lockservice", lock_url + "/"},
        {"gateway", gateway_url + "/"}}) {
    ASSERT_OK_AND_ASSIGN(testing::PageLayout phone,
                         browser->Load(url, kPhoneWidth, kPhoneHeight));
    KeepScreenshot(name + "-390px.png", phone.screenshot_png);
    EXPECT_EQ(phone.inner_width, kPhoneWidth) << name;
    EXPECT_FALSE(phone.ScrollsSideways())
        << name << " scrolls sideways at 390 px: content " << phone.scroll_width
        << " px wide, screen " << phone.client_width << " px";
    EXPECT_GT(phone.screenshot_png.size(), 1000u);
    ASSERT_OK_AND_ASSIGN(testing::PageLayout desktop, browser->Load(url, 1280, 800));
    KeepScreenshot(name + "-1280px.png", desktop.screenshot_png);
    EXPECT_FALSE(desktop.ScrollsSideways()) << name;
  }

  // The measurement can tell: a page wider than the phone scrolls.
  ASSERT_OK_AND_ASSIGN(
      testing::PageLayout wide,
      browser->Load("data:text/html,<meta name=viewport content='width=device-width'>"
                    "<div style='width:1000px'>wide</div>",
                    kPhoneWidth, kPhoneHeight));
  EXPECT_TRUE(wide.ScrollsSideways()) << wide.scroll_width << " vs " << wide.client_width;
}

}  // namespace
}  // namespace fencegate::e2e
