const axios = require("axios");

const api = axios.create({
  baseURL: "https://api.sendgrid.com/v3",
  headers: { Authorization: `Bearer ${process.env.SENDGRID_API_KEY}` },
  timeout: 5000,
});

exports.handler = async (event) => {
  await api.post("/mail/send", {
    personalizations: [{ to: [{ email: event.to }] }],
    from: { email: process.env.MAIL_FROM },
    subject: event.subject,
    content: [{ type: "text/plain", value: event.text }],
  });
  return { sent: true };
};
