import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import path from "node:path";

const here = path.dirname(fileURLToPath(import.meta.url));
const countries = JSON.parse(await readFile(path.join(here, "countries.json"), "utf8"));

export async function handler(event) {
  const code = String(event.code || "").toUpperCase();
  return countries[code] ? { code, name: countries[code] } : { statusCode: 404 };
}
