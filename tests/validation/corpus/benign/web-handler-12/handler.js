const Stripe = require("stripe");

const stripe = Stripe(process.env.STRIPE_SECRET_KEY);
const endpointSecret = process.env.STRIPE_WEBHOOK_SECRET;

async function fulfil(session) {
  // hand over to the fulfilment queue; idempotent on session.id
  console.log(`fulfilling ${session.id} for ${session.customer_details?.email}`);
}

exports.handler = async (event) => {
  const signature = event.headers["stripe-signature"] || event.headers["Stripe-Signature"];
  const rawBody = event.isBase64Encoded ? Buffer.from(event.body, "base64") : event.body;
  let evt;
  try {
    evt = stripe.webhooks.constructEvent(rawBody, signature, endpointSecret);
  } catch (err) {
    console.warn("webhook signature verification failed:", err.message);
    return { statusCode: 400, body: `Webhook Error: ${err.message}` };
  }

  switch (evt.type) {
    case "checkout.session.completed":
      if (evt.data.object.payment_status === "paid") await fulfil(evt.data.object);
      break;
    case "checkout.session.async_payment_succeeded":
      await fulfil(evt.data.object);
      break;
    case "invoice.payment_failed":
      console.log(`payment failed for customer ${evt.data.object.customer}`);
      break;
    default:
      // ignore everything else, but acknowledge so Stripe stops retrying
      break;
  }
  return { statusCode: 200, body: JSON.stringify({ received: true }) };
};
