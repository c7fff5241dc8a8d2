const { MongoClient } = require("mongodb");

const client = new MongoClient(process.env.MONGO_URI);

exports.handler = async (event) => {
  await client.connect();
  const events = client.db("analytics").collection("events");
  const top = await events.aggregate([
    { $match: { type: event.type || "pageview" } },
    { $group: { _id: "$path", hits: { $sum: 1 } } },
    { $sort: { hits: -1 } },
    { $limit: 10 },
  ]).toArray();
  return top;
};
