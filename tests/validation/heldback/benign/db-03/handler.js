const { MongoClient } = require("mongodb");
let client;
exports.handle = async (event) => {
  client = client || new MongoClient(process.env.MONGO_URL);
  await client.connect();
  const col = client.db("shop").collection("orders");
  const page = Math.max(0, parseInt(event.query.page || "0", 10));
  const docs = await col.find({ status: "open" }).skip(page * 20).limit(20).toArray();
  return { orders: docs };
};
