// MSK (Kafka) trigger: record values arrive base64-encoded, keyed by "topic-partition".
const { DynamoDBClient } = require("@aws-sdk/client-dynamodb");
const { DynamoDBDocumentClient, BatchWriteCommand } = require("@aws-sdk/lib-dynamodb");

const doc = DynamoDBDocumentClient.from(new DynamoDBClient({}));
const TABLE = process.env.READINGS_TABLE;

const decode = (record) => {
  const value = JSON.parse(Buffer.from(record.value, "base64").toString("utf8"));
  return { sensorId: value.sensor, ts: value.ts, celsius: Math.round(value.temp * 10) / 10, offset: record.offset };
};

exports.handler = async (event) => {
  const readings = Object.values(event.records).flat().map(decode).filter((r) => r.celsius > -80 && r.celsius < 150);
  for (let i = 0; i < readings.length; i += 25) {
    let items = readings.slice(i, i + 25).map((r) => ({ PutRequest: { Item: r } }));
    for (let attempt = 0; items.length && attempt < 5; attempt++) {
      const res = await doc.send(new BatchWriteCommand({ RequestItems: { [TABLE]: items } }));
      items = res.UnprocessedItems?.[TABLE] || [];
      if (items.length) await new Promise((r) => setTimeout(r, 100 * 2 ** attempt));
    }
    if (items.length) throw new Error(`${items.length} readings not written after retries`);
  }
  return { written: readings.length };
};
