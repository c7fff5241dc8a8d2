-- An asynchronous call of ``name@v3`` runs version v3 when it is taken, not whichever
-- version the traffic split draws then: the queued call keeps the version it named
-- (NULL: drawn when the call runs, as before).
ALTER TABLE invocation_queue ADD COLUMN version text;
