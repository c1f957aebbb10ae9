// Who may use the reward service: a listening address is loopback or not (beyond loopback a
// bearer token is required), and a request's Authorization header carries the token or not,
// compared in constant time so that the time of a refusal says nothing about the token.
#pragma once

#include <string>
#include <string_view>

namespace stitch::server {

// True for "localhost", 127.0.0.0/8, ::1 and ::ffff:127.x.x.x (brackets allowed); false for
// anything else, including 0.0.0.0, :: and names that merely resolve to loopback.
bool isLoopbackHost(std::string_view host);

// Whether `given` is exactly the secret `token`, in a time that depends on the token's length only
// (every byte of it is read whatever `given` holds), which a refusal may reveal.
bool tokenMatches(std::string_view given, std::string_view token);

// True when `authorization` is "Bearer TOKEN" with exactly `token` (non-empty). The comparison
// takes the same time whatever the first differing byte.
bool bearerMatches(std::string_view authorization, std::string_view token);

}  // namespace stitch::server
