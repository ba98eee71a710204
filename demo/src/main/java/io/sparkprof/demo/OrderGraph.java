package io.sparkprof.demo;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.io.Serializable;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * A nested, Java-serializable object graph (an order with its customer, address, line items and
 * attributes): about 40 objects per order, so that Java serialization, which writes class
 * descriptors, handles and every field reflectively, costs far more than building the graph.
 */
final class OrderGraph {
  private OrderGraph() {}

  static final class Address implements Serializable {
    private static final long serialVersionUID = 1L;
    final String street;
    final String city;
    final String postalCode;

    Address(String street, String city, String postalCode) {
      this.street = street;
      this.city = city;
      this.postalCode = postalCode;
    }
  }

  static final class Customer implements Serializable {
    private static final long serialVersionUID = 1L;
    final long id;
    final String name;
    final Address billing;
    final Address shipping;

    Customer(long id, String name, Address billing, Address shipping) {
      this.id = id;
      this.name = name;
      this.billing = billing;
      this.shipping = shipping;
    }
  }

  static final class LineItem implements Serializable {
    private static final long serialVersionUID = 1L;
    final String sku;
    final int quantity;
    final double unitPrice;
    final Map<String, String> options;

    LineItem(String sku, int quantity, double unitPrice, Map<String, String> options) {
      this.sku = sku;
      this.quantity = quantity;
      this.unitPrice = unitPrice;
      this.options = options;
    }
  }

  static final class Order implements Serializable {
    private static final long serialVersionUID = 1L;
    final long id;
    final Customer customer;
    final List<LineItem> items;
    final Map<String, String> attributes;

    Order(long id, Customer customer, List<LineItem> items, Map<String, String> attributes) {
      this.id = id;
      this.customer = customer;
      this.items = items;
      this.attributes = attributes;
    }

    double total() {
      double sum = 0;
      for (LineItem item : items) {
        sum += item.quantity * item.unitPrice;
      }
      return sum;
    }
  }

  /** A deterministic order for (seed, index). */
  static Order order(Random random, long id) {
    Address billing = new Address("street " + random.nextInt(10000), "city " + random.nextInt(500),
        Integer.toString(10000 + random.nextInt(89999)));
    Address shipping = random.nextBoolean() ? billing
        : new Address("street " + random.nextInt(10000), "city " + random.nextInt(500),
            Integer.toString(10000 + random.nextInt(89999)));
    Customer customer = new Customer(random.nextInt(50000), "customer " + random.nextInt(50000),
        billing, shipping);
    List<LineItem> items = new ArrayList<>();
    int count = 3 + random.nextInt(6);
    for (int i = 0; i < count; i++) {
      Map<String, String> options = new HashMap<>();
      options.put("colour", "c" + random.nextInt(20));
      options.put("size", "s" + random.nextInt(8));
      items.add(new LineItem("sku-" + random.nextInt(100000), 1 + random.nextInt(5),
          random.nextInt(10000) / 100.0, options));
    }
    Map<String, String> attributes = new HashMap<>();
    attributes.put("channel", random.nextBoolean() ? "web" : "store");
    attributes.put("campaign", "campaign-" + random.nextInt(100));
    return new Order(id, customer, items, attributes);
  }

  /**
   * A deep copy through Java serialization (the "defensive copy" idiom, as Commons Lang's
   * SerializationUtils.clone does it): an ObjectOutputStream and an ObjectInputStream per call.
   */
  static Order deepCopy(Order order) {
    try {
      ByteArrayOutputStream bytes = new ByteArrayOutputStream(2048);
      try (ObjectOutputStream out = new ObjectOutputStream(bytes)) {
        out.writeObject(order);
      }
      try (ObjectInputStream in =
          new ObjectInputStream(new ByteArrayInputStream(bytes.toByteArray()))) {
        return (Order) in.readObject();
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (ClassNotFoundException e) {
      throw new IllegalStateException(e);
    }
  }
}
