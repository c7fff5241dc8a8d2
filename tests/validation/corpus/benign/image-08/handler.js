const { S3Client, GetObjectCommand, PutObjectCommand } = require("@aws-sdk/client-s3");
const sharp = require("sharp");
const path = require("node:path");

const s3 = new S3Client({});
const WIDTHS = [320, 640, 1280];

exports.handler = async (event) => {
  const jobs = event.Records.map(async (record) => {
    const Bucket = record.s3.bucket.name;
    const Key = decodeURIComponent(record.s3.object.key.replace(/\+/g, " "));
    if (!Key.startsWith("uploads/")) return [];

    const { Body } = await s3.send(new GetObjectCommand({ Bucket, Key }));
    const original = Buffer.from(await Body.transformToByteArray());
    const { width } = await sharp(original).metadata();
    const name = path.parse(Key).name;

    return Promise.all(
      WIDTHS.filter((w) => w < width || w === WIDTHS[0]).map(async (w) => {
        const body = await sharp(original).rotate().resize({ width: w, withoutEnlargement: true }).webp({ quality: 80 }).toBuffer();
        const dest = `responsive/${name}-${w}w.webp`;
        await s3.send(new PutObjectCommand({ Bucket, Key: dest, Body: body, ContentType: "image/webp" }));
        return dest;
      }),
    );
  });
  return { written: (await Promise.all(jobs)).flat() };
};
