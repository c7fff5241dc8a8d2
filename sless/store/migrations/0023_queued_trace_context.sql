-- The W3C trace context of an asynchronous call (``traceparent``: the gateway's
-- ``sless.enqueue`` span of the call that queued it): each attempt continues that trace.
-- NULL when tracing was off (SLESS_GATEWAY_TRACING=false). docs/tracing.md
ALTER TABLE invocation_queue ADD COLUMN traceparent text;
