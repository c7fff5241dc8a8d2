const { S3Client, GetObjectCommand, PutObjectCommand } = require("@aws-sdk/client-s3");

const s3 = new S3Client({});

exports.handler = async (event) => {
  for (const rec of event.Records) {
    const Bucket = rec.s3.bucket.name;
    const Key = decodeURIComponent(rec.s3.object.key.replace(/\+/g, " "));
    const obj = await s3.send(new GetObjectCommand({ Bucket, Key }));
    const text = await obj.Body.transformToString();
    await s3.send(new PutObjectCommand({ Bucket, Key: `${Key}.lines`, Body: String(text.split("\n").length) }));
  }
  return { ok: true };
};
