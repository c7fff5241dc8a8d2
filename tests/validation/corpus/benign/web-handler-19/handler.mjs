export async function handler(event) {
  const url = new URL(event.rawPath || "/", "https://fn.local");
  const name = url.searchParams.get("name") || "world";
  return {
    statusCode: 200,
    headers: { "content-type": "text/plain; charset=utf-8" },
    body: `Hello, ${name.slice(0, 50)}!`,
  };
}
