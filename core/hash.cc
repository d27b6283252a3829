#include "core/hash.h"

#include <openssl/evp.h>

#include "core/check.h"

namespace kestrel {

std::string Sha256Hex(std::string_view data) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  const bool ok = EVP_Digest(data.data(), data.size(), digest, &length, EVP_sha256(), nullptr) == 1;
  KESTREL_CHECK(ok, "EVP_Digest(sha256) failed");
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex(2 * length, '0');
  for (unsigned int i = 0; i < length; ++i) {
    hex[2 * i] = kHex[digest[i] >> 4];
    hex[2 * i + 1] = kHex[digest[i] & 0xf];
  }
  return hex;
}

}  // namespace kestrel
