const EMAIL = /[\w.+-]+@[\w-]+\.[\w.-]+/g;
const PHONE = /\+?\d[\d\s().-]{7,}\d/g;

exports.handler = async (event) => ({
  text: String(event.text || "").replace(EMAIL, "[email]").replace(PHONE, "[phone]"),
});
