-- Triage of change points: what a person said a change point of a series
-- is (expected, a regression, an improvement), keyed by the series and
-- the first run after the change. Not rebuilt by reindex: it is not in
-- any results.json.
CREATE TABLE change_acks (
  study TEXT NOT NULL,
  branch TEXT NOT NULL,
  series TEXT NOT NULL,
  run_id TEXT NOT NULL,
  status TEXT NOT NULL,
  note TEXT NOT NULL,
  created_at BIGINT NOT NULL,
  PRIMARY KEY (study, branch, series, run_id)
);
