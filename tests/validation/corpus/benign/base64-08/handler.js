exports.handler = async (event) => {
  const raw = Buffer.from(event.data || "", "base64");
  return { bytes: raw.length, hex: raw.subarray(0, 32).toString("hex"), base64url: raw.toString("base64url") };
};
