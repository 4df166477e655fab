-- The index of the run history. The gzipped results.json in runs.results
-- is the source of truth; every other table is rebuilt from it by
-- `tandem history reindex`. One text for SQLite and PostgreSQL: TEXT,
-- BIGINT, DOUBLE PRECISION and BYTEA mean the same to both.
CREATE TABLE runs (
  id TEXT PRIMARY KEY,               -- sha256 of results.json, hex
  created_at BIGINT NOT NULL,        -- when the run was made, unix ns
  added_at BIGINT NOT NULL,          -- when it was added here, unix ns
  study TEXT NOT NULL,
  branch TEXT NOT NULL,
  commit_sha TEXT NOT NULL,
  dirty BIGINT NOT NULL,
  ci_url TEXT NOT NULL,
  testbed TEXT NOT NULL,
  env_fp TEXT NOT NULL,              -- the machine's fingerprint
  tandem_version TEXT NOT NULL,
  interrupted BIGINT NOT NULL,
  pinned BIGINT NOT NULL DEFAULT 0,
  results BYTEA NOT NULL             -- results.json, gzipped
);
CREATE INDEX runs_by_branch ON runs (study, branch, created_at);

CREATE TABLE tags (
  run_id TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  k TEXT NOT NULL,
  v TEXT NOT NULL,
  PRIMARY KEY (run_id, k)
);

-- One scalar per run per series: a scenario's headline per target and
-- level (best of the rounds), its error share; a sweep's knee; a cost.
CREATE TABLE points (
  run_id TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  series TEXT NOT NULL,
  config_fp TEXT NOT NULL,           -- what the series measured: differ, not comparable
  direction TEXT NOT NULL,           -- lower or higher is better
  unit TEXT NOT NULL,
  value DOUBLE PRECISION NOT NULL,
  PRIMARY KEY (run_id, series)
);
CREATE INDEX points_by_series ON points (series, run_id);

-- The rounds behind a headline, for significance.
CREATE TABLE samples (
  run_id TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  series TEXT NOT NULL,
  round BIGINT NOT NULL,
  value DOUBLE PRECISION NOT NULL,
  PRIMARY KEY (run_id, series, round)
);

CREATE TABLE verdicts (
  run_id TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  scenario TEXT NOT NULL,
  target TEXT NOT NULL,
  level BIGINT NOT NULL,
  verdict TEXT NOT NULL,
  reason TEXT NOT NULL,
  PRIMARY KEY (run_id, scenario, target, level)
);

-- A compat difference by its fingerprint (call, target, path, kind), so a
-- new one stands out from those already known.
CREATE TABLE differences (
  run_id TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  fingerprint TEXT NOT NULL,
  call TEXT NOT NULL,
  target TEXT NOT NULL,
  path TEXT NOT NULL,
  kind TEXT NOT NULL,
  cases BIGINT NOT NULL,
  PRIMARY KEY (run_id, fingerprint)
);
