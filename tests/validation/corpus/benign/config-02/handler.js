const LaunchDarkly = require("@launchdarkly/node-server-sdk");

const client = LaunchDarkly.init(process.env.LD_SDK_KEY, { stream: false, timeout: 3 });
const ready = client.waitForInitialization({ timeout: 3 }).catch((err) => {
  console.warn("LaunchDarkly unavailable, serving defaults:", err.message);
});

exports.handler = async (event) => {
  await ready;
  const user = event.requestContext?.authorizer?.claims || {};
  const context = { kind: "user", key: user.sub || "anonymous", email: user.email, custom: { plan: user["custom:plan"] || "free" } };
  const [newCheckout, maxUploadMb] = await Promise.all([
    client.variation("new-checkout", context, false),
    client.variation("max-upload-mb", context, 25),
  ]);
  return {
    statusCode: 200,
    headers: { "cache-control": "private, max-age=30" },
    body: JSON.stringify({ newCheckout, maxUploadMb }),
  };
};
