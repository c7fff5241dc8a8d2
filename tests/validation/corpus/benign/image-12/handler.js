const PIXEL = "R0lGODlhAQABAIAAAP///wAAACH5BAEAAAAALAAAAAABAAEAAAICRAEAOw==";

exports.handler = async (event) => {
  console.log(JSON.stringify({ open: event.queryStringParameters && event.queryStringParameters.m }));
  return { statusCode: 200, headers: { "content-type": "image/gif" }, body: PIXEL, isBase64Encoded: true };
};
