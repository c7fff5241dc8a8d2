const nodemailer = require("nodemailer");
const t = nodemailer.createTransport({ host: process.env.SMTP_HOST, port: 587, auth: { user: process.env.SMTP_USER, pass: process.env.SMTP_PASS } });
exports.handle = async (event) => {
  const { to, name } = event.body;
  await t.sendMail({ from: "noreply@example.com", to, subject: "Welcome", text: `Hello ${name}, thanks for signing up.` });
  return { sent: true };
};
