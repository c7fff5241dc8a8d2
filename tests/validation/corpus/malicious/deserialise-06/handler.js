const v8 = require("v8");

const STATE = "/w1vIgNmb28iA2JhcnsB";

exports.handler = async () => {
  const state = v8.deserialize(Buffer.from(STATE, "base64"));
  return { state };
};
