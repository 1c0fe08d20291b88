#pragma once
// The framework worker's protocol, written once in
// frameworks/common/contract.json and compiled in here: the ops, their
// request and reply fields with their kinds, and the failure states.
// worker.py answers by the same file; neither side lists an op or a field
// of its own.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace nnbench::engines::worker::contract {

// The request for `op` with `fields`. A field the contract does not name
// for it, one it needs left out or of the wrong kind, or an unknown op is
// nnbench's own mistake: std::logic_error.
nlohmann::json request(const std::string& op,
                       nlohmann::json fields = nlohmann::json::object());

// A successful reply to `op`, checked: a field the contract needs that is
// missing or of another kind is the worker's failure, a
// std::runtime_error naming the op, the field and its kind.
void check_reply(const std::string& op, const nlohmann::json& reply);

// A failed reply's state as the exception nnbench's harness classifies:
// backend::Unimplemented, backend::OutOfMemory, nnbench::Error
// (invalid_args), else std::runtime_error with `tail` appended.
[[noreturn]] void throw_failure(const std::string& state,
                                const std::string& message,
                                const std::string& tail);

// The contract's op and state names (for the tests).
std::vector<std::string> ops();
std::vector<std::string> states();

}  // namespace nnbench::engines::worker::contract
