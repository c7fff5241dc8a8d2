-- The messages of a WebSocket session, each way: the caller's (request_messages) and the
-- function's (response_messages), as request_bytes and response_bytes count their payload
-- bytes. NULL for a call that was not a session (docs/websockets.md).
ALTER TABLE invocations ADD COLUMN request_messages bigint;
ALTER TABLE invocations ADD COLUMN response_messages bigint;
