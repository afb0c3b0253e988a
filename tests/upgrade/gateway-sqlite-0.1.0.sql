-- The gateway's SQLite file, as fencegate 0.1.0 (809a75a) left it: the 0.1.0 format.
-- Made by tests/upgrade/make_fixtures.sh; do not edit (run it again).
PRAGMA foreign_keys=OFF;
BEGIN TRANSACTION;
CREATE TABLE resources(  name TEXT PRIMARY KEY NOT NULL,  max_token INTEGER NOT NULL,  revision INTEGER NOT NULL) WITHOUT ROWID;
INSERT INTO resources VALUES('bin',3,1);
INSERT INTO resources VALUES('fenced-only',7,0);
INSERT INTO resources VALUES('orders',5,5);
CREATE TABLE objects(  resource TEXT NOT NULL,  key TEXT NOT NULL,  value BLOB NOT NULL,  version INTEGER NOT NULL,  PRIMARY KEY(resource, key));
INSERT INTO objects VALUES('orders','order-1',X'73686970706564',3);
INSERT INTO objects VALUES('orders','order-3',X'717565756564',5);
INSERT INTO objects VALUES('bin','blob',X'0001feff2066656e636567617465',1);
COMMIT;
