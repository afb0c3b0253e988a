# The protocol, model-checked (label model; tests/model/, docs/model.md):
# spin explores every interleaving of the Promela model within its bounds.
# One test per configuration, which passes only if the search is
# exhaustive and finds no violation, and one per mutant (a broken variant
# of the protocol selected by a macro), which passes only if spin finds the
# violation and its trail replays. scripts/model-check runs spin and gcc in
# the build tree (model/<name>/: the generated verifier, its report, the
# trail); nothing is written to the source tree. Each takes seconds to a
# minute; ./scripts/model-check --large runs the larger bounds.
find_program(SPIN_EXECUTABLE spin)
if(NOT SPIN_EXECUTABLE)
  message(FATAL_ERROR
    "spin (the SPIN model checker) was not found, and the model tier "
    "(tests/model_tests.cmake, label model) needs it. Install it with "
    "./scripts/install-deps (Debian package: spin), or put it on PATH.")
endif()
find_program(MODEL_CC gcc)
if(NOT MODEL_CC)
  message(FATAL_ERROR
    "gcc was not found; the model tier compiles spin's verifiers with it. "
    "Install it with ./scripts/install-deps (Debian package: gcc).")
endif()

set(fencegate_model_work ${CMAKE_CURRENT_BINARY_DIR}/model)
execute_process(
  COMMAND ${PROJECT_SOURCE_DIR}/scripts/model-check --names
  OUTPUT_VARIABLE fencegate_model_names
  RESULT_VARIABLE fencegate_model_names_status)
if(NOT fencegate_model_names_status EQUAL 0)
  message(FATAL_ERROR "scripts/model-check --names failed: ${fencegate_model_names}")
endif()
string(STRIP "${fencegate_model_names}" fencegate_model_names)
string(REPLACE "\n" ";" fencegate_model_names "${fencegate_model_names}")
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS
  ${PROJECT_SOURCE_DIR}/scripts/model-check)

foreach(name IN LISTS fencegate_model_names)
  string(REPLACE ":" "." test_name "${name}")
  add_test(NAME model.${test_name}
    COMMAND ${PROJECT_SOURCE_DIR}/scripts/model-check
      --work-dir ${fencegate_model_work} ${name})
  # PROCESSORS 2: spin's verifier keeps a core busy (scripts/test runs the
  # main tier at two ctest jobs per core).
  set_tests_properties(model.${test_name} PROPERTIES LABELS model TIMEOUT 900 PROCESSORS 2)
endforeach()
