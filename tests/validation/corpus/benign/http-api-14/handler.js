const Stripe = require("stripe");

const stripe = Stripe(process.env.STRIPE_SECRET_KEY);

exports.handler = async (event) => {
  const sig = event.headers["stripe-signature"];
  const evt = stripe.webhooks.constructEvent(event.body, sig, process.env.STRIPE_WEBHOOK_SECRET);
  if (evt.type === "checkout.session.completed") {
    console.log("paid", evt.data.object.id);
  }
  return { statusCode: 200 };
};
