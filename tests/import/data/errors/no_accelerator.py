print("this is not a TAIDL spec")
