public enum SesameCryptoPlaceholder {}
