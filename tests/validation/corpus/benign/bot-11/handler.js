exports.handle = async (event) => {
  const { title, url } = event.body || {};
  await fetch(process.env.DISCORD_WEBHOOK, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ embeds: [{ title: String(title).slice(0, 200), url }] }),
  });
  return { statusCode: 204 };
};
