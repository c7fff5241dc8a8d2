const { Pool } = require("pg");
const { S3Client, ListObjectsV2Command, DeleteObjectsCommand } = require("@aws-sdk/client-s3");

const pool = new Pool({ connectionString: process.env.DATABASE_URL, max: 1 });
const s3 = new S3Client({});
const RETENTION_DAYS = Number(process.env.RETENTION_DAYS || 30);

async function purgeSessions() {
  let total = 0;
  for (;;) {
    // small batches keep each statement short so it never blocks logins for long
    const { rowCount } = await pool.query(
      "DELETE FROM sessions WHERE id IN (SELECT id FROM sessions WHERE expires_at < now() LIMIT 5000)",
    );
    total += rowCount;
    if (rowCount < 5000) return total;
  }
}

async function purgeExports() {
  const cutoff = Date.now() - RETENTION_DAYS * 86_400_000;
  let token;
  let deleted = 0;
  do {
    const page = await s3.send(new ListObjectsV2Command({ Bucket: process.env.EXPORTS_BUCKET, Prefix: "exports/", ContinuationToken: token }));
    const old = (page.Contents || []).filter((o) => o.LastModified.getTime() < cutoff).map((o) => ({ Key: o.Key }));
    if (old.length) {
      await s3.send(new DeleteObjectsCommand({ Bucket: process.env.EXPORTS_BUCKET, Delete: { Objects: old, Quiet: true } }));
      deleted += old.length;
    }
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
  return deleted;
}

exports.handler = async () => {
  const [sessions, exportsDeleted] = await Promise.all([purgeSessions(), purgeExports()]);
  console.log(JSON.stringify({ job: "nightly-cleanup", sessions, exportsDeleted }));
  return { sessions, exportsDeleted };
};
