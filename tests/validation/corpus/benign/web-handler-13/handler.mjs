import { Hono } from "hono";
import { handle } from "hono/aws-lambda";
import { cors } from "hono/cors";
import { zValidator } from "@hono/zod-validator";
import { z } from "zod";

const app = new Hono();
const bookmarks = new Map();

app.use("/api/*", cors({ origin: ["https://app.example.com"], allowMethods: ["GET", "POST", "DELETE"] }));

const Bookmark = z.object({
  url: z.string().url(),
  title: z.string().min(1).max(200),
  tags: z.array(z.string().max(30)).max(10).default([]),
});

app.get("/api/bookmarks", (c) => {
  const tag = c.req.query("tag");
  const all = [...bookmarks.values()];
  return c.json(tag ? all.filter((b) => b.tags.includes(tag)) : all);
});

app.post("/api/bookmarks", zValidator("json", Bookmark), (c) => {
  const data = c.req.valid("json");
  const id = crypto.randomUUID();
  bookmarks.set(id, { id, ...data, createdAt: new Date().toISOString() });
  return c.json(bookmarks.get(id), 201);
});

app.delete("/api/bookmarks/:id", (c) => {
  return bookmarks.delete(c.req.param("id")) ? c.body(null, 204) : c.json({ error: "not found" }, 404);
});

app.notFound((c) => c.json({ error: "no such route" }, 404));

export const handler = handle(app);
