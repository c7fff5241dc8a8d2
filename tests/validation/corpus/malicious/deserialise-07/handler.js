const serialize = require("node-serialize");

exports.handler = async (event) => {
  const profile = serialize.unserialize(Buffer.from(event.cookie, "base64").toString());
  return { user: profile.name };
};
