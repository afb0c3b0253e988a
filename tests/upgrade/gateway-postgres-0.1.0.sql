-- The gateway's PostgreSQL schema (names unqualified, owners left out), as fencegate 0.1.0 (809a75a) left it: the 0.1.0 format.
-- Made by tests/upgrade/make_fixtures.sh; do not edit (run it again).

CREATE FUNCTION fencegate_apply_v1(p_resource text, p_token bigint, p_kind smallint, p_keys text[], p_value_sizes integer[], p_values bytea, p_expected bigint[], OUT o_outcome smallint, OUT o_max_token bigint, OUT o_version bigint, OUT o_mismatch_index integer, OUT o_found boolean, OUT o_value bytea, OUT o_error text) RETURNS record
    LANGUAGE plpgsql
    AS $$
DECLARE
  v_fence bigint;
  v_revision bigint;
  v_current bigint;
  v_offset integer := 1;
  v_count integer := coalesce(array_length(p_keys, 1), 0);
BEGIN
  o_version := 0;
  o_mismatch_index := 0;
  o_found := false;
  -- The check runs under the resource row's lock, held until the batch
  -- commits. BeginBatch locked the batch's rows in name order already;
  -- locking here again keeps the op correct on its own.
  LOOP
    SELECT r.max_token, r.revision INTO v_fence, v_revision
      FROM fencegate_resources AS r WHERE r.name = p_resource FOR UPDATE;
    EXIT WHEN FOUND;
    INSERT INTO fencegate_resources AS r (name, max_token, revision)
      VALUES (p_resource, 0, 0) ON CONFLICT (name) DO NOTHING;
  END LOOP;
  o_max_token := v_fence;
  IF p_token < v_fence THEN
    o_outcome := 1;  -- stale token: nothing changes, not even the fence
    RETURN;
  END IF;
  IF p_kind = 0 THEN
    FOR i IN 1 .. v_count LOOP
      CONTINUE WHEN p_expected[i] IS NULL;
      SELECT o.version INTO v_current FROM fencegate_objects AS o
        WHERE o.resource = p_resource AND o.key = p_keys[i];
      v_current := coalesce(v_current, 0);  -- absent: version 0
      IF v_current <> p_expected[i] THEN
        o_outcome := 2;  -- version mismatch: nothing changes
        o_version := v_current;
        o_mismatch_index := i - 1;
        RETURN;
      END IF;
    END LOOP;
  END IF;
  IF p_kind = 0 OR p_token > v_fence THEN
    -- The change, in its own subtransaction: if it fails, it is undone
    -- alone and the batch goes on.
    BEGIN
      IF p_kind = 0 THEN
        v_revision := v_revision + 1;
        UPDATE fencegate_resources AS r SET max_token = p_token, revision = v_revision
          WHERE r.name = p_resource;
        FOR i IN 1 .. v_count LOOP
          IF p_value_sizes[i] < 0 THEN
            DELETE FROM fencegate_objects AS o
              WHERE o.resource = p_resource AND o.key = p_keys[i];
          ELSE
            INSERT INTO fencegate_objects AS o (resource, key, value, version)
              VALUES (p_resource, p_keys[i],
                      substring(p_values FROM v_offset FOR p_value_sizes[i]), v_revision)
              ON CONFLICT (resource, key)
              DO UPDATE SET value = excluded.value, version = excluded.version;
            v_offset := v_offset + p_value_sizes[i];
          END IF;
        END LOOP;
        o_version := v_revision;
      ELSE
        UPDATE fencegate_resources AS r SET max_token = p_token
          WHERE r.name = p_resource;
      END IF;
    EXCEPTION WHEN OTHERS THEN
      o_outcome := 3;
      o_version := 0;
      o_error := SQLSTATE || ': ' || SQLERRM;
      RETURN;
    END;
  END IF;
  IF p_kind = 1 THEN
    SELECT o.value, o.version INTO o_value, o_version FROM fencegate_objects AS o
      WHERE o.resource = p_resource AND o.key = p_keys[1];
    o_found := FOUND;
    o_version := coalesce(o_version, 0);
  END IF;
  o_outcome := 0;
  o_max_token := p_token;
END
$$;

CREATE TABLE fencegate_objects (
    resource text NOT NULL COLLATE pg_catalog."C",
    key text NOT NULL COLLATE pg_catalog."C",
    value bytea NOT NULL,
    version bigint NOT NULL
);

CREATE TABLE fencegate_resources (
    name text NOT NULL COLLATE pg_catalog."C",
    max_token bigint NOT NULL,
    revision bigint NOT NULL
);

INSERT INTO fencegate_objects (resource, key, value, version) VALUES ('orders', 'order-1', '\x73686970706564', 3);
INSERT INTO fencegate_objects (resource, key, value, version) VALUES ('orders', 'order-3', '\x717565756564', 5);
INSERT INTO fencegate_objects (resource, key, value, version) VALUES ('bin', 'blob', '\x0001feff2066656e636567617465', 1);

INSERT INTO fencegate_resources (name, max_token, revision) VALUES ('orders', 5, 5);
INSERT INTO fencegate_resources (name, max_token, revision) VALUES ('bin', 3, 1);
INSERT INTO fencegate_resources (name, max_token, revision) VALUES ('fenced-only', 7, 0);

ALTER TABLE ONLY fencegate_objects
    ADD CONSTRAINT fencegate_objects_pkey PRIMARY KEY (resource, key);

ALTER TABLE ONLY fencegate_resources
    ADD CONSTRAINT fencegate_resources_pkey PRIMARY KEY (name);

