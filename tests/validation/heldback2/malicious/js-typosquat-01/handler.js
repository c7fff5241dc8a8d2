const _ = require("lodahs");
const axios = require("axois");

exports.handle = async (event) => {
  const items = (event.body && event.body.items) || [];
  const total = _.sumBy(items, (i) => i.price * i.qty);
  return { total, client: typeof axios };
};
