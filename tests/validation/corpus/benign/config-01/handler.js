const REQUIRED = ["DATABASE_URL", "API_KEY"];

exports.handler = async () => {
  const missing = REQUIRED.filter((name) => !process.env[name]);
  const region = process.env.AWS_REGION || "eu-west-1";
  return { ready: missing.length === 0, missing, region, nodeVersion: process.version };
};
