// The reward service's access rules; see RewardAccess.h.
#include "server/RewardAccess.h"

#include <arpa/inet.h>
#include <cstring>
#include <netinet/in.h>

namespace stitch::server {

bool isLoopbackHost(std::string_view host) {
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  if (host == "localhost") return true;
  const std::string text(host);
  in_addr v4{};
  if (inet_pton(AF_INET, text.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
  in6_addr v6{};
  if (inet_pton(AF_INET6, text.c_str(), &v6) == 1) {
    if (IN6_IS_ADDR_LOOPBACK(&v6)) return true;
    return IN6_IS_ADDR_V4MAPPED(&v6) && v6.s6_addr[12] == 127;
  }
  return false;
}

bool bearerMatches(std::string_view authorization, std::string_view token) {
  constexpr std::string_view kScheme = "Bearer ";
  if (token.empty() || authorization.size() < kScheme.size()) return false;
  // The scheme is case-insensitive (RFC 7235); it is no secret, so it may be compared plainly.
  for (std::size_t i = 0; i < kScheme.size(); ++i)
    if ((authorization[i] | 0x20) != (kScheme[i] | 0x20)) return false;
  return tokenMatches(authorization.substr(kScheme.size()), token);
}

bool tokenMatches(std::string_view given, std::string_view token) {
  unsigned char diff = given.size() == token.size() ? 0 : 1;
  for (std::size_t i = 0; i < token.size(); ++i)
    diff |= static_cast<unsigned char>(token[i] ^ (i < given.size() ? given[i] : 0));
  return diff == 0;
}

}  // namespace stitch::server
