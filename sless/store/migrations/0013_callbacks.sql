-- The outcome of an asynchronous invocation's callback (sless.events.callbacks):
-- {"state": "delivered"|"failed"|"refused", "attempts", "status", "message", "host", "at"};
-- NULL while no callback was due (the call has not ended, or its function has none).
ALTER TABLE invocation_queue ADD COLUMN callback jsonb;
