const { PrismaClient } = require("@prisma/client");

const prisma = new PrismaClient();
const MAX_TAKE = 50;

const respond = (statusCode, body) => ({
  statusCode,
  headers: { "content-type": "application/json", "cache-control": "no-store" },
  body: JSON.stringify(body),
});

exports.handler = async (event) => {
  const q = event.queryStringParameters || {};
  const take = Math.min(Number.parseInt(q.limit ?? "20", 10) || 20, MAX_TAKE);
  const where = {
    published: true,
    ...(q.author ? { author: { handle: q.author } } : {}),
    ...(q.search ? { title: { contains: q.search, mode: "insensitive" } } : {}),
  };
  try {
    const posts = await prisma.post.findMany({
      where,
      take: take + 1,
      ...(q.cursor ? { cursor: { id: q.cursor }, skip: 1 } : {}),
      orderBy: [{ publishedAt: "desc" }, { id: "desc" }],
      select: { id: true, title: true, slug: true, publishedAt: true, author: { select: { handle: true } } },
    });
    const hasMore = posts.length > take;
    const page = hasMore ? posts.slice(0, take) : posts;
    return respond(200, { data: page, nextCursor: hasMore ? page[page.length - 1].id : null });
  } catch (err) {
    if (err.code === "P2025") return respond(400, { error: "cursor no longer exists" });
    console.error(err);
    return respond(500, { error: "internal error" });
  }
};
