exports.handle = async (event) => {
  const msg = event.body && event.body.content || "";
  if (!msg.startsWith("!weather")) return { skipped: true };
  const city = encodeURIComponent(msg.slice(9).trim() || "Paris");
  const w = await (await fetch(`https://wttr.in/${city}?format=j1`)).json();
  await fetch(process.env.DISCORD_WEBHOOK_URL, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ content: `${city}: ${w.current_condition[0].temp_C}C` }),
  });
  return { posted: true };
};
