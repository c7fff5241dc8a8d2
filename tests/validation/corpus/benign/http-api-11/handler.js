// OAuth2 client-credentials: the token is cached across warm invocations and refreshed early.
let cached = { token: null, expiresAt: 0 };

async function accessToken() {
  if (cached.token && Date.now() < cached.expiresAt - 60_000) return cached.token;
  const res = await fetch(process.env.TOKEN_URL, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({
      grant_type: "client_credentials",
      client_id: process.env.CLIENT_ID,
      client_secret: process.env.CLIENT_SECRET,
      scope: "shipments.read",
    }),
  });
  if (!res.ok) throw new Error(`token endpoint returned ${res.status}`);
  const { access_token, expires_in } = await res.json();
  cached = { token: access_token, expiresAt: Date.now() + expires_in * 1000 };
  return access_token;
}

exports.handler = async (event) => {
  const tracking = encodeURIComponent(event.trackingNumber);
  let res = await fetch(`${process.env.CARRIER_API}/shipments/${tracking}`, {
    headers: { authorization: `Bearer ${await accessToken()}` },
  });
  if (res.status === 401) {
    cached.token = null; // revoked early: fetch a fresh one once
    res = await fetch(`${process.env.CARRIER_API}/shipments/${tracking}`, {
      headers: { authorization: `Bearer ${await accessToken()}` },
    });
  }
  if (res.status === 404) return { found: false };
  if (!res.ok) throw new Error(`carrier API returned ${res.status}`);
  const shipment = await res.json();
  return { found: true, status: shipment.status, eta: shipment.estimatedDelivery, events: shipment.events?.slice(-5) };
};
