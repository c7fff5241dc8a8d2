const bcrypt = require("bcryptjs");

exports.handler = async (event) => {
  if (event.hash) return { match: await bcrypt.compare(event.password, event.hash) };
  return { hash: await bcrypt.hash(event.password, 12) };
};
