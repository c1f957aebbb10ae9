// Pins the protocol-wide rules the dispatcher enforces for every method.
#include "server/Dispatcher.h"

#include "TestOutput.h"

#include <gtest/gtest.h>

using namespace stitch;
using server::Dispatcher;

namespace {

struct Fixture {
  test::RecordingOutput out;
  server::OutgoingRequests outgoing{out};
  Dispatcher d{out, outgoing};
  std::optional<server::Reply> held;  // a request left unanswered, to be cancelled

  Fixture() {
    d.addRequest("initialize", [this](const protocol::json&, server::Reply r, agents::CancelToken) {
      d.setLifecycle(Dispatcher::Lifecycle::Running);
      r(protocol::json::object());
    });
    d.request<protocol::TextDocumentPositionParams>(
        "typed", [](protocol::TextDocumentPositionParams p, server::Reply r, agents::CancelToken) {
          r(p.position.line);
        });
    d.addRequest("slow", [this](const protocol::json&, server::Reply r, agents::CancelToken token) {
      held.emplace(std::move(r));
      token.onCancel([this] { held->error(protocol::ErrorCode::RequestCancelled, "cancelled"); });
    });
    d.addRequest("throws", [](const protocol::json&, server::Reply, agents::CancelToken) {
      throw std::runtime_error("boom");
    });
  }
  protocol::json last() { return out.messages().back(); }
};

}  // namespace

TEST(Dispatcher, RequestBeforeInitializeIsRefused) {
  Fixture f;
  f.d.handleBody(R"({"jsonrpc":"2.0","id":1,"method":"typed","params":{}})");
  EXPECT_EQ(f.last()["error"]["code"], -32002);
}

TEST(Dispatcher, ParseErrorHasNullIdAndServingContinues) {
  Fixture f;
  f.d.handleBody("{oops");
  EXPECT_EQ(f.last()["error"]["code"], -32700);
  EXPECT_TRUE(f.last()["id"].is_null());
  f.d.handleBody(R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{}})");
  EXPECT_TRUE(f.last().contains("result"));
}

TEST(Dispatcher, UnknownMethodBadParamsAndInvalidRequest) {
  Fixture f;
  f.d.handleBody(R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{}})");
  f.d.handleBody(R"({"jsonrpc":"2.0","id":2,"method":"nope"})");
  EXPECT_EQ(f.last()["error"]["code"], -32601);
  f.d.handleBody(R"({"jsonrpc":"2.0","id":3,"method":"typed","params":{"textDocument":{"uri":"u"},"position":{"line":"x","character":0}}})");
  EXPECT_EQ(f.last()["error"]["code"], -32602);
  EXPECT_NE(f.last()["error"]["message"].get<std::string>().find("position"), std::string::npos);
  f.d.handleBody(R"({"jsonrpc":"1.0","id":4,"method":"typed"})");
  EXPECT_EQ(f.last()["error"]["code"], -32600);
  EXPECT_EQ(f.last()["id"], 4);
  f.d.handleBody(R"({"jsonrpc":"2.0","id":5,"method":"typed","params":{"textDocument":{"uri":"u"},"position":{"line":4,"character":0}}})");
  EXPECT_EQ(f.last()["result"], 4);
}

TEST(Dispatcher, SecondInitializeIsInvalid) {
  Fixture f;
  f.d.handleBody(R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{}})");
  f.d.handleBody(R"({"jsonrpc":"2.0","id":2,"method":"initialize","params":{}})");
  EXPECT_EQ(f.last()["error"]["code"], -32600);
}

TEST(Dispatcher, CancelRequestReachesTheHandler) {
  Fixture f;
  f.d.handleBody(R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{}})");
  f.d.handleBody(R"({"jsonrpc":"2.0","id":"a","method":"slow"})");
  EXPECT_EQ(f.d.inflight(), 1u);
  // A live id cannot be reused.
  f.d.handleBody(R"({"jsonrpc":"2.0","id":"a","method":"slow"})");
  EXPECT_EQ(f.last()["error"]["code"], -32600);
  f.d.handleBody(R"({"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":"a"}})");
  EXPECT_EQ(f.last()["id"], "a");
  EXPECT_EQ(f.last()["error"]["code"], -32800);
  EXPECT_EQ(f.d.inflight(), 0u);
  // Cancelling what is already answered is a no-op.
  auto before = f.out.messages().size();
  f.d.handleBody(R"({"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":"a"}})");
  EXPECT_EQ(f.out.messages().size(), before);
}

TEST(Dispatcher, HandlerThatThrowsStillAnswers) {
  Fixture f;
  f.d.handleBody(R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{}})");
  f.d.handleBody(R"({"jsonrpc":"2.0","id":9,"method":"throws"})");
  EXPECT_EQ(f.last()["id"], 9);
  EXPECT_EQ(f.last()["error"]["code"], -32603);
}

TEST(Dispatcher, RequestsAfterShutdownAreInvalid) {
  Fixture f;
  f.d.handleBody(R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{}})");
  f.d.setLifecycle(Dispatcher::Lifecycle::ShutDown);
  f.d.handleBody(R"({"jsonrpc":"2.0","id":2,"method":"typed","params":{}})");
  EXPECT_EQ(f.last()["error"]["code"], -32600);
}

TEST(Dispatcher, OversizedMessageIsAnsweredWithNullId) {
  Fixture f;
  f.d.handleFrameProblem("message of 1 GB refused", true);
  EXPECT_EQ(f.last()["error"]["code"], -32600);
  EXPECT_TRUE(f.last()["id"].is_null());
  auto before = f.out.messages().size();
  f.d.handleFrameProblem("garbage header line skipped", false);
  EXPECT_EQ(f.out.messages().size(), before);
}
