// A stand-in for <expected>, force-included by tools/lint.sh only. clang-tidy 14 (the one
// installed) cannot compile libstdc++ 12's std::expected: its special members are conditionally
// trivial (requires-clauses on a defaulted destructor), which clang supports from version 16,
// so every file returning a Result<T> with a non-trivial T fails with clang-diagnostic-error.
// This header defines the include guard of the real one and the subset of std::expected that
// ktune uses, on top of std::variant; the build itself (g++) never sees it.
#pragma once

#if defined(__clang__) && __clang_major__ < 16
#define _GLIBCXX_EXPECTED 1

#include <optional>
#include <type_traits>
#include <utility>
#include <variant>

namespace std {

template <class E>
class unexpected {
 public:
  template <class G = E>
  requires(!is_same_v<remove_cvref_t<G>, unexpected> &&
           is_constructible_v<E, G>) constexpr explicit unexpected(G&& e)
      : e_(std::forward<G>(e)) {}
  constexpr E& error() & noexcept { return e_; }
  constexpr const E& error() const& noexcept { return e_; }
  constexpr E&& error() && noexcept { return std::move(e_); }

 private:
  E e_;
};
template <class E>
unexpected(E) -> unexpected<E>;

template <class T>
inline constexpr bool ktune_lint_is_unexpected = false;
template <class E>
inline constexpr bool ktune_lint_is_unexpected<unexpected<E>> = true;

template <class T, class E>
class expected {
 public:
  using value_type = T;
  using error_type = E;

  constexpr expected() requires is_default_constructible_v<T> : v_(in_place_index<0>) {}
  template <class U = T>
  requires(!is_same_v<remove_cvref_t<U>, expected> &&
           !ktune_lint_is_unexpected<remove_cvref_t<U>> &&
           is_constructible_v<T, U>) constexpr expected(U&& v)
      : v_(in_place_index<0>, std::forward<U>(v)) {}
  template <class G>
  constexpr expected(const unexpected<G>& u) : v_(in_place_index<1>, u.error()) {}
  template <class G>
  constexpr expected(unexpected<G>&& u) : v_(in_place_index<1>, std::move(u).error()) {}

  constexpr bool has_value() const noexcept { return v_.index() == 0; }
  constexpr explicit operator bool() const noexcept { return has_value(); }
  constexpr T& operator*() & { return std::get<0>(v_); }
  constexpr const T& operator*() const& { return std::get<0>(v_); }
  constexpr T&& operator*() && { return std::get<0>(std::move(v_)); }
  constexpr T* operator->() { return &std::get<0>(v_); }
  constexpr const T* operator->() const { return &std::get<0>(v_); }
  constexpr T& value() & { return std::get<0>(v_); }
  constexpr const T& value() const& { return std::get<0>(v_); }
  constexpr T&& value() && { return std::get<0>(std::move(v_)); }
  constexpr E& error() & { return std::get<1>(v_); }
  constexpr const E& error() const& { return std::get<1>(v_); }
  constexpr E&& error() && { return std::get<1>(std::move(v_)); }
  template <class U>
  constexpr T value_or(U&& d) const& {
    return has_value() ? **this : static_cast<T>(std::forward<U>(d));
  }
  template <class U>
  constexpr T value_or(U&& d) && {
    return has_value() ? std::move(**this) : static_cast<T>(std::forward<U>(d));
  }
  template <class... A>
  constexpr T& emplace(A&&... a) {
    return v_.template emplace<0>(std::forward<A>(a)...);
  }

 private:
  variant<T, E> v_;
};

template <class E>
class expected<void, E> {
 public:
  using value_type = void;
  using error_type = E;

  constexpr expected() = default;
  template <class G>
  constexpr expected(const unexpected<G>& u) : e_(u.error()) {}
  template <class G>
  constexpr expected(unexpected<G>&& u) : e_(std::move(u).error()) {}

  constexpr bool has_value() const noexcept { return !e_.has_value(); }
  constexpr explicit operator bool() const noexcept { return has_value(); }
  constexpr void operator*() const noexcept {}
  constexpr void value() const {}
  constexpr E& error() & { return *e_; }
  constexpr const E& error() const& { return *e_; }
  constexpr E&& error() && { return std::move(*e_); }
  constexpr void emplace() noexcept { e_.reset(); }

 private:
  optional<E> e_;
};

}  // namespace std

#endif
