const { S3Client, GetObjectCommand } = require("@aws-sdk/client-s3");
const { getSignedUrl } = require("@aws-sdk/s3-request-presigner");
const s3 = new S3Client({});
exports.handle = async (event) => {
  const key = String(event.query.key || "").replace(/\.\./g, "");
  const url = await getSignedUrl(s3, new GetObjectCommand({ Bucket: process.env.BUCKET, Key: key }), { expiresIn: 300 });
  return { url };
};
