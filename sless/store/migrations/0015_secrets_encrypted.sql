-- Tenant secrets encrypted at rest (sless/store/crypto.py): AES-256-GCM, ``sealed`` is
-- nonce || ciphertext+tag under the key named ``key_id``. A row written before this
-- migration keeps its plaintext ``value`` until the gateway's start-up pass
-- (SecretRepository.reencrypt) seals it and clears ``value``.
ALTER TABLE secrets ALTER COLUMN value DROP NOT NULL;
ALTER TABLE secrets ADD COLUMN key_id text;
ALTER TABLE secrets ADD COLUMN sealed bytea;
ALTER TABLE secrets ADD CONSTRAINT secrets_sealed_or_plain
    CHECK ((key_id IS NULL) = (sealed IS NULL));
