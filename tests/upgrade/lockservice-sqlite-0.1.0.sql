-- The lock service's SQLite file, as fencegate 0.1.0 (809a75a) left it: the 0.1.0 format.
-- Made by tests/upgrade/make_fixtures.sh; do not edit (run it again).
PRAGMA foreign_keys=OFF;
BEGIN TRANSACTION;
CREATE TABLE meta(  key TEXT PRIMARY KEY, value INTEGER NOT NULL);
INSERT INTO meta VALUES('last_token',7);
CREATE TABLE leases(  resource TEXT PRIMARY KEY, holder TEXT NOT NULL,  token INTEGER NOT NULL, ttl_ms INTEGER NOT NULL,  hold_count INTEGER NOT NULL, request_ids TEXT NOT NULL);
INSERT INTO leases VALUES('orders','alice',1,3600000,2,replace('a-1\na-2','\n',char(10)));
CREATE TABLE holds(  token INTEGER PRIMARY KEY, resource TEXT NOT NULL,  mode INTEGER NOT NULL, permits INTEGER NOT NULL, holder TEXT NOT NULL,  ttl_ms INTEGER NOT NULL, hold_count INTEGER NOT NULL,  request_ids TEXT NOT NULL);
INSERT INTO holds VALUES(2,'report',1,0,'reader-1',3600000,1,'r-1');
INSERT INTO holds VALUES(3,'report',1,0,'reader-2',1800000,1,'r-2');
INSERT INTO holds VALUES(4,'workers',2,3,'worker-1',3600000,1,'p-1');
INSERT INTO holds VALUES(5,'workers',2,3,'worker-2',3600000,1,'p-2');
INSERT INTO holds VALUES(6,'workers',2,3,'worker-3',3600000,1,'p-3');
CREATE TABLE fence_positions(  resource TEXT PRIMARY KEY, position INTEGER NOT NULL UNIQUE);
INSERT INTO fence_positions VALUES('orders',1);
INSERT INTO fence_positions VALUES('done',7);
CREATE TABLE waiters(  seq INTEGER PRIMARY KEY, resource TEXT NOT NULL, holder TEXT NOT NULL,  ttl_ms INTEGER NOT NULL, request_id TEXT NOT NULL,  mode INTEGER NOT NULL DEFAULT 0, permits INTEGER NOT NULL DEFAULT 0);
INSERT INTO waiters VALUES(1,'orders','bob',1200000,'b-1',0,0);
INSERT INTO waiters VALUES(2,'orders','carol',600000,'c-1',1,0);
INSERT INTO waiters VALUES(3,'report','writer',300000,'w-1',0,0);
INSERT INTO waiters VALUES(4,'workers','worker-4',3600000,'p-4',2,3);
COMMIT;
