-- A run can be archived: kept, but out of lists, trends and baselines.
ALTER TABLE runs ADD COLUMN archived BIGINT NOT NULL DEFAULT 0
