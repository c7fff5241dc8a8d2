-- Why a call died, in the words the caller was told ("worker killed: out of memory
-- (128 MiB limit)", "timed out after 30 s", "response larger than 32 MiB"): the error
-- column keeps the error code. NULL for calls that did not die (sless.models.endings).
ALTER TABLE invocations ADD COLUMN reason text;
