const { DynamoDBClient } = require("@aws-sdk/client-dynamodb");
const { DynamoDBDocumentClient, GetCommand, PutCommand } = require("@aws-sdk/lib-dynamodb");

const doc = DynamoDBDocumentClient.from(new DynamoDBClient({}));
const TableName = process.env.TABLE_NAME;

exports.handler = async (event) => {
  if (event.httpMethod === "PUT") {
    const item = JSON.parse(event.body);
    await doc.send(new PutCommand({ TableName, Item: { pk: `PROFILE#${item.id}`, ...item } }));
    return { statusCode: 204 };
  }
  const { Item } = await doc.send(new GetCommand({ TableName, Key: { pk: `PROFILE#${event.pathParameters.id}` } }));
  return Item ? { statusCode: 200, body: JSON.stringify(Item) } : { statusCode: 404 };
};
