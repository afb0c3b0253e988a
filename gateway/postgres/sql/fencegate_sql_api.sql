-- fencegate's SQL fencing API, version 1 (docs/sql-fencing.md).
--
-- Fencing inside a user's own PostgreSQL transactions, on any table, with
-- the same fence per resource as the gateway's (fencegate_resources):
--
--   BEGIN;
--   SELECT fencegate_fence('orders/42', 17);  -- the lease's token
--   UPDATE orders SET ... WHERE id = 42;
--   COMMIT;
--
-- fencegate_fence(resource, token [, key_id, mac]) -> bigint
--   Takes the resource's fence row lock until the transaction ends (shared
--   among the fence holder's own transactions when the token is the fence,
--   exclusive otherwise), refuses a token below the fence (SQLSTATE ZF001,
--   the fence in the DETAIL as "current_token=N"), otherwise raises the
--   fence to the token and returns it. Whatever the transaction then writes commits only with the fence
--   raised; a newer holder's fencegate_fence waits for the row lock and
--   then sees it. Under REPEATABLE READ or SERIALIZABLE a transaction whose
--   snapshot predates a newer holder's commit fails with 40001 instead
--   (retry it: it then sees ZF001).
-- fencegate_check(resource, token [, key_id, mac]) -> bigint
--   A fenced read's check: refuses a token below the fence (ZF001), locks
--   and changes nothing, returns the fence. Exact under REPEATABLE READ or
--   SERIALIZABLE (the check and the reads see one snapshot).
-- fencegate_fence_of(resource) -> bigint: the fence, 0 if none.
-- fencegate_sql_api_version() -> integer: 1.
--
-- Errors (RAISE with ERRCODE): ZF001 stale token; ZF002 bad signature;
-- 22004 a NULL argument; 22023 a resource or token out of its limits;
-- 25P01 fencegate_fence outside a transaction block (raised at the commit,
-- which rolls back; see fencegate_refuse_commit_in_the_fence_statement).
--
-- Signed tokens: once fencegate_keys holds a key (`fencegate sql-keys`),
-- fencegate_fence and fencegate_check accept only tokens with a valid
-- HMAC-SHA256 signature (common/core/token_signer.h), checked with pgcrypto.
-- fencegate_keys is readable only by the owner of these functions, which
-- run as that owner (SECURITY DEFINER): install as a role the applications
-- do not use, and grant them nothing but EXECUTE (the default).
--
-- Installed by `fencegate sql-install --postgres=URL` into the current
-- schema, after the gateway's tables (gateway/postgres/postgres_schema.h), in
-- one transaction; running it again changes nothing. The ALTER FUNCTIONs at
-- the end pin each function's search_path to this schema and pgcrypto's.

CREATE EXTENSION IF NOT EXISTS pgcrypto;

CREATE TABLE IF NOT EXISTS fencegate_keys(
  id text COLLATE "C" PRIMARY KEY,
  secret bytea NOT NULL,
  not_after timestamptz);  -- NULL: never expires
REVOKE ALL ON TABLE fencegate_keys FROM PUBLIC;

CREATE OR REPLACE FUNCTION fencegate_sql_api_version() RETURNS integer
LANGUAGE sql IMMUTABLE AS 'SELECT 1';

-- The arguments every call checks, as the gateway does (request_validation.h):
-- a resource of 1..256 bytes, a token of 1..2^63-1.
CREATE OR REPLACE FUNCTION fencegate_check_args(p_function text, p_resource text,
                                                p_token bigint) RETURNS void
LANGUAGE plpgsql AS $body$
BEGIN
  IF p_resource IS NULL THEN
    RAISE EXCEPTION USING ERRCODE = '22004',
      MESSAGE = p_function || ': resource is NULL; pass the name the lease was acquired on';
  END IF;
  IF octet_length(p_resource) NOT BETWEEN 1 AND 256 THEN
    RAISE EXCEPTION USING ERRCODE = '22023',
      MESSAGE = p_function || ': resource is ' || octet_length(p_resource)
                || ' bytes; it must be 1 to 256 bytes';
  END IF;
  IF p_token IS NULL THEN
    RAISE EXCEPTION USING ERRCODE = '22004',
      MESSAGE = p_function || ': token is NULL; pass the token of a lease from the lock service';
  END IF;
  IF p_token < 1 THEN
    RAISE EXCEPTION USING ERRCODE = '22023',
      MESSAGE = p_function || ': token is ' || p_token
                || '; tokens start at 1: pass the token of a lease from the lock service';
  END IF;
END
$body$;

-- With keys loaded, the token's signature must match one of them. The
-- message is TokenSigner::Verify()'s; p_mac is compared through a digest,
-- so the comparison's timing says nothing about the expected MAC.
CREATE OR REPLACE FUNCTION fencegate_verify_signature(p_resource text, p_token bigint,
                                                      p_key_id text, p_mac bytea)
RETURNS void
LANGUAGE plpgsql STABLE AS $body$
DECLARE
  v_secret bytea;
  v_not_after timestamptz;
  v_message bytea;
BEGIN
  IF NOT EXISTS (SELECT 1 FROM fencegate_keys) THEN
    RETURN;  -- signing is off
  END IF;
  IF p_key_id IS NULL AND p_mac IS NULL THEN
    RAISE EXCEPTION USING ERRCODE = 'ZF002',
      MESSAGE = 'token ' || p_token || ' for resource ' || quote_literal(p_resource)
                || ' carries no signature, and this database accepts only signed tokens '
                || '(fencegate_keys): pass the key_id and mac the lock service returned with it';
  END IF;
  SELECT k.secret, k.not_after INTO v_secret, v_not_after
    FROM fencegate_keys AS k WHERE k.id = p_key_id;
  IF NOT FOUND THEN
    RAISE EXCEPTION USING ERRCODE = 'ZF002',
      MESSAGE = 'token ' || p_token || ' is signed with key '
                || coalesce(quote_literal(left(p_key_id, 64)), 'NULL')
                || ' (key_id), which this database does not accept (unknown, or removed by '
                || 'a key rotation): acquire the lock again for a token signed with a current key';
  END IF;
  IF v_not_after IS NOT NULL AND clock_timestamp() >= v_not_after THEN
    RAISE EXCEPTION USING ERRCODE = 'ZF002',
      MESSAGE = 'token ' || p_token || ' is signed with key ' || quote_literal(p_key_id)
                || ', which expired at ' || v_not_after
                || ': acquire the lock again for a token signed with a current key';
  END IF;
  -- "fencegate.v1.token" 0x00, u8(len(key_id)) key_id, u64be(len(resource))
  -- resource, u64be(token).
  v_message := convert_to('fencegate.v1.token', 'UTF8') || '\x00'::bytea
               || set_byte('\x00'::bytea, 0, octet_length(p_key_id))
               || convert_to(p_key_id, 'UTF8')
               || int8send(octet_length(p_resource)::bigint) || convert_to(p_resource, 'UTF8')
               || int8send(p_token);
  IF p_mac IS NULL OR octet_length(p_mac) <> 32
     OR digest(hmac(v_message, v_secret, 'sha256'), 'sha256') <> digest(p_mac, 'sha256') THEN
    RAISE EXCEPTION USING ERRCODE = 'ZF002',
      MESSAGE = 'the signature does not match token ' || p_token || ' on resource '
                || quote_literal(p_resource) || ': it is forged, altered, or was made for '
                || 'another token or resource. Use the token and signature the lock service '
                || 'granted for this resource';
  END IF;
END
$body$;

CREATE OR REPLACE FUNCTION fencegate_stale_token(p_function text, p_resource text,
                                                 p_token bigint, p_fence bigint)
RETURNS void
LANGUAGE plpgsql AS $body$
BEGIN
  RAISE EXCEPTION USING ERRCODE = 'ZF001',
    MESSAGE = p_function || ': stale fencing token ' || p_token || ' for resource '
              || quote_literal(p_resource) || ': a newer holder fenced it at ' || p_fence,
    DETAIL = 'current_token=' || p_fence,
    HINT = 'This transaction must not write: its lease was lost. Roll back; acquire the '
           || 'lock again for a new token.';
END
$body$;

CREATE OR REPLACE FUNCTION fencegate_fence(p_resource text, p_token bigint,
                                           p_key_id text DEFAULT NULL,
                                           p_mac bytea DEFAULT NULL)
RETURNS bigint
LANGUAGE plpgsql VOLATILE SECURITY DEFINER AS $body$
DECLARE
  v_fence bigint;
BEGIN
  PERFORM fencegate_check_args('fencegate_fence', p_resource, p_token);
  PERFORM fencegate_verify_signature(p_resource, p_token, p_key_id, p_mac);
  -- The holder of the fence writing again (its token is the fence) shares
  -- the row lock with its other transactions, so they do not wait for each
  -- other's commits; a newer holder's FOR UPDATE waits for all of them.
  -- Every other token takes the row lock exclusively, as the gateway's
  -- fencegate_apply_v1 does. Either lock is taken once and held: a share
  -- lock upgraded later could deadlock with another holder of it.
  SELECT r.max_token INTO v_fence FROM fencegate_resources AS r WHERE r.name = p_resource;
  IF FOUND AND p_token = v_fence THEN
    SELECT r.max_token INTO v_fence
      FROM fencegate_resources AS r WHERE r.name = p_resource FOR SHARE;
    IF p_token < v_fence THEN  -- raised meanwhile by a newer holder
      PERFORM fencegate_stale_token('fencegate_fence', p_resource, p_token, v_fence);
    END IF;
    RETURN p_token;
  END IF;
  LOOP
    SELECT r.max_token INTO v_fence
      FROM fencegate_resources AS r WHERE r.name = p_resource FOR UPDATE;
    EXIT WHEN FOUND;
    INSERT INTO fencegate_resources AS r (name, max_token, revision)
      VALUES (p_resource, 0, 0) ON CONFLICT (name) DO NOTHING;
  END LOOP;
  IF p_token < v_fence THEN
    PERFORM fencegate_stale_token('fencegate_fence', p_resource, p_token, v_fence);
  END IF;
  -- Always an UPDATE here (the same fence when another transaction raised
  -- it to this token meanwhile): it queues the commit-time check of
  -- fencegate_fence_needs_a_transaction, which refuses a commit in this
  -- very statement.
  PERFORM set_config('fencegate.fenced_in', statement_timestamp()::text, true);
  UPDATE fencegate_resources AS r SET max_token = p_token WHERE r.name = p_resource;
  RETURN p_token;
END
$body$;

-- Alone (autocommit), fencegate_fence would raise the fence and commit at
-- once, fencing nothing. Its UPDATE (on every call but the fence holder's
-- again, which changes nothing) queues this check for the commit (a
-- deferred constraint trigger; the gateway's updates set no
-- fencegate.fenced_in and queue nothing): a commit within the statement
-- that fenced is an implicit transaction (or one query string from the
-- fence to COMMIT), and is refused: the transaction rolls back.
CREATE OR REPLACE FUNCTION fencegate_refuse_commit_in_the_fence_statement()
RETURNS trigger
LANGUAGE plpgsql AS $body$
BEGIN
  IF current_setting('fencegate.fenced_in', true) = statement_timestamp()::text THEN
    RAISE EXCEPTION USING ERRCODE = '25P01',
      MESSAGE = 'fencegate_fence must run inside a transaction block: BEGIN, then '
                || 'fencegate_fence, then the writes it fences, then COMMIT sent as a '
                || 'statement of its own. Alone it would raise the fence and commit at once, '
                || 'fencing nothing; the fence is left as it was';
  END IF;
  RETURN NULL;
END
$body$;
DROP TRIGGER IF EXISTS fencegate_fence_needs_a_transaction ON fencegate_resources;
CREATE CONSTRAINT TRIGGER fencegate_fence_needs_a_transaction
  AFTER UPDATE ON fencegate_resources DEFERRABLE INITIALLY DEFERRED FOR EACH ROW
  WHEN (coalesce(current_setting('fencegate.fenced_in', true), '') <> '')
  EXECUTE FUNCTION fencegate_refuse_commit_in_the_fence_statement();

CREATE OR REPLACE FUNCTION fencegate_check(p_resource text, p_token bigint,
                                           p_key_id text DEFAULT NULL,
                                           p_mac bytea DEFAULT NULL)
RETURNS bigint
LANGUAGE plpgsql STABLE SECURITY DEFINER AS $body$
DECLARE
  v_fence bigint;
BEGIN
  PERFORM fencegate_check_args('fencegate_check', p_resource, p_token);
  PERFORM fencegate_verify_signature(p_resource, p_token, p_key_id, p_mac);
  SELECT coalesce(max(r.max_token), 0) INTO v_fence
    FROM fencegate_resources AS r WHERE r.name = p_resource;
  IF p_token < v_fence THEN
    PERFORM fencegate_stale_token('fencegate_check', p_resource, p_token, v_fence);
  END IF;
  RETURN v_fence;
END
$body$;

CREATE OR REPLACE FUNCTION fencegate_fence_of(p_resource text) RETURNS bigint
LANGUAGE sql STABLE SECURITY DEFINER AS $body$
  SELECT coalesce(max(r.max_token), 0) FROM fencegate_resources AS r
  WHERE r.name = p_resource
$body$;

-- The helpers are not part of the API.
REVOKE ALL ON FUNCTION fencegate_check_args(text, text, bigint) FROM PUBLIC;
REVOKE ALL ON FUNCTION fencegate_verify_signature(text, bigint, text, bytea) FROM PUBLIC;
REVOKE ALL ON FUNCTION fencegate_stale_token(text, text, bigint, bigint) FROM PUBLIC;
REVOKE ALL ON FUNCTION fencegate_refuse_commit_in_the_fence_statement() FROM PUBLIC;

-- Each function resolves names in this schema and pgcrypto's only, so a
-- caller cannot put its own fencegate_resources or hmac() in their place.
DO $pin$
DECLARE
  v_schema text := current_schema();
  v_crypto text;
  v_function text;
BEGIN
  SELECT n.nspname INTO v_crypto FROM pg_extension AS e
    JOIN pg_namespace AS n ON n.oid = e.extnamespace WHERE e.extname = 'pgcrypto';
  FOREACH v_function IN ARRAY ARRAY[
      'fencegate_check_args(text, text, bigint)',
      'fencegate_verify_signature(text, bigint, text, bytea)',
      'fencegate_stale_token(text, text, bigint, bigint)',
      'fencegate_refuse_commit_in_the_fence_statement()',
      'fencegate_fence(text, bigint, text, bytea)',
      'fencegate_check(text, bigint, text, bytea)',
      'fencegate_fence_of(text)'] LOOP
    EXECUTE format('ALTER FUNCTION %I.%s SET search_path = %I, %I, pg_temp',
                   v_schema, v_function, v_schema, v_crypto);
  END LOOP;
END
$pin$;
