// Readiness: which settings are present (values of secrets are never returned).
const REQUIRED = ["DATABASE_URL", "REDIS_URL"];
const OPTIONAL = { LOG_LEVEL: "info", CACHE_TTL_S: "60", REGION: "eu-west-1" };

exports.handle = async () => {
  const missing = REQUIRED.filter((k) => !process.env[k]);
  const settings = Object.fromEntries(Object.entries(OPTIONAL).map(([k, d]) => [k, process.env[k] || d]));
  const db = process.env.DATABASE_URL ? new URL(process.env.DATABASE_URL) : null;
  return {
    statusCode: missing.length ? 503 : 200,
    body: { ready: !missing.length, missing, settings, database_host: db ? db.hostname : null },
  };
};
