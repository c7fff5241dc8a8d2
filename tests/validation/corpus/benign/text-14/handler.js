function caesar(text, shift) {
  return text.replace(/[a-z]/gi, (ch) => {
    const base = ch <= "Z" ? 65 : 97;
    return String.fromCharCode(((ch.charCodeAt(0) - base + shift + 26) % 26) + base);
  });
}

exports.handler = async (event) => ({
  encoded: caesar(event.text || "", Number(event.shift) || 3),
  reversed: (event.text || "").split("").reverse().join(""),
  letters: Array.from({ length: 26 }, (_, i) => String.fromCharCode(97 + i)).join(""),
});
